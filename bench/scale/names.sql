-- Brazilian first names and surnames for bench/scale.sh, with rough weights
-- (how often a name comes up, per the IBGE's lists of the most common
-- names): a name-prefix search such as "Maria Sou" then matches a small,
-- realistic share of the accounts, not everyone. `slug` is the name without
-- accents, for usernames and e-mail addresses. Plain SQL that both sqlite3
-- and psql read; the loader expands the weights into first_names(k, …) and
-- surnames(k, …).
CREATE TEMP TABLE first_names0 (name TEXT NOT NULL, slug TEXT NOT NULL, genero TEXT NOT NULL, w INTEGER NOT NULL);
INSERT INTO first_names0 (name, slug, genero, w) VALUES
('Maria', 'maria', 'F', 40), ('José', 'jose', 'M', 20), ('Ana', 'ana', 'F', 16), ('João', 'joao', 'M', 14),
('Antônio', 'antonio', 'M', 10), ('Francisco', 'francisco', 'M', 8), ('Carlos', 'carlos', 'M', 7),
('Paulo', 'paulo', 'M', 6), ('Pedro', 'pedro', 'M', 6), ('Lucas', 'lucas', 'M', 6), ('Luiz', 'luiz', 'M', 5),
('Marcos', 'marcos', 'M', 5), ('Luís', 'luis', 'M', 4), ('Gabriel', 'gabriel', 'M', 4), ('Rafael', 'rafael', 'M', 4),
('Francisca', 'francisca', 'F', 5), ('Daniel', 'daniel', 'M', 3), ('Marcelo', 'marcelo', 'M', 3),
('Bruno', 'bruno', 'M', 3), ('Eduardo', 'eduardo', 'M', 3), ('Felipe', 'felipe', 'M', 3),
('Raimundo', 'raimundo', 'M', 3), ('Rodrigo', 'rodrigo', 'M', 3), ('Antônia', 'antonia', 'F', 4),
('Adriana', 'adriana', 'F', 3), ('Juliana', 'juliana', 'F', 3), ('Márcia', 'marcia', 'F', 3),
('Fernanda', 'fernanda', 'F', 3), ('Patrícia', 'patricia', 'F', 3), ('Aline', 'aline', 'F', 3),
('Sandra', 'sandra', 'F', 2), ('Camila', 'camila', 'F', 2), ('Amanda', 'amanda', 'F', 2), ('Bruna', 'bruna', 'F', 2),
('Jéssica', 'jessica', 'F', 2), ('Letícia', 'leticia', 'F', 2), ('Júlia', 'julia', 'F', 2),
('Luciana', 'luciana', 'F', 2), ('Vanessa', 'vanessa', 'F', 2), ('Mariana', 'mariana', 'F', 2),
('Gabriela', 'gabriela', 'F', 2), ('Vera', 'vera', 'F', 1), ('Vitória', 'vitoria', 'F', 1),
('Larissa', 'larissa', 'F', 2), ('Cláudia', 'claudia', 'F', 2), ('Beatriz', 'beatriz', 'F', 2),
('Rita', 'rita', 'F', 1), ('Luana', 'luana', 'F', 1), ('Sônia', 'sonia', 'F', 1), ('Renata', 'renata', 'F', 2),
('Eliane', 'eliane', 'F', 1), ('Josefa', 'josefa', 'F', 2), ('Simone', 'simone', 'F', 1),
('Natália', 'natalia', 'F', 1), ('Cristiane', 'cristiane', 'F', 1), ('Carla', 'carla', 'F', 1),
('Débora', 'debora', 'F', 1), ('Rosângela', 'rosangela', 'F', 1), ('Jaqueline', 'jaqueline', 'F', 1),
('Rosa', 'rosa', 'F', 1), ('Daniela', 'daniela', 'F', 1), ('Aparecida', 'aparecida', 'F', 1),
('Marlene', 'marlene', 'F', 1), ('Terezinha', 'terezinha', 'F', 1), ('Raimunda', 'raimunda', 'F', 2),
('Andreia', 'andreia', 'F', 1), ('Fabiana', 'fabiana', 'F', 1), ('Lúcia', 'lucia', 'F', 1),
('Raquel', 'raquel', 'F', 1), ('Ângela', 'angela', 'F', 1), ('Rafaela', 'rafaela', 'F', 1),
('Joana', 'joana', 'F', 1), ('Luzia', 'luzia', 'F', 1), ('Elaine', 'elaine', 'F', 1), ('Regina', 'regina', 'F', 1),
('Tatiane', 'tatiane', 'F', 1), ('Thiago', 'thiago', 'M', 2), ('Matheus', 'matheus', 'M', 2),
('Leonardo', 'leonardo', 'M', 2), ('Gustavo', 'gustavo', 'M', 2), ('Guilherme', 'guilherme', 'M', 2),
('Leandro', 'leandro', 'M', 1), ('Tiago', 'tiago', 'M', 1), ('Anderson', 'anderson', 'M', 1),
('Ricardo', 'ricardo', 'M', 2), ('Márcio', 'marcio', 'M', 1), ('Jorge', 'jorge', 'M', 1),
('Sebastião', 'sebastiao', 'M', 2), ('Alexandre', 'alexandre', 'M', 1), ('Roberto', 'roberto', 'M', 2),
('Edson', 'edson', 'M', 1), ('Diego', 'diego', 'M', 1), ('Vítor', 'vitor', 'M', 1), ('Sérgio', 'sergio', 'M', 1),
('Cláudio', 'claudio', 'M', 1), ('Fernando', 'fernando', 'M', 2), ('Fábio', 'fabio', 'M', 1),
('Manoel', 'manoel', 'M', 2), ('Vinícius', 'vinicius', 'M', 1), ('Renato', 'renato', 'M', 1),
('Samuel', 'samuel', 'M', 1), ('Davi', 'davi', 'M', 1), ('Arthur', 'arthur', 'M', 1), ('Heitor', 'heitor', 'M', 1),
('Miguel', 'miguel', 'M', 1), ('Enzo', 'enzo', 'M', 1), ('Bernardo', 'bernardo', 'M', 1),
('Helena', 'helena', 'F', 1), ('Alice', 'alice', 'F', 1), ('Laura', 'laura', 'F', 1),
('Valentina', 'valentina', 'F', 1), ('Sophia', 'sophia', 'F', 1), ('Isabela', 'isabela', 'F', 1),
('Manuela', 'manuela', 'F', 1), ('Lorena', 'lorena', 'F', 1), ('Cecília', 'cecilia', 'F', 1),
('Lívia', 'livia', 'F', 1), ('Maria José', 'mariajose', 'F', 3), ('Maria Aparecida', 'mariaaparecida', 'F', 3),
('Maria de Fátima', 'mariadefatima', 'F', 2), ('Maria das Graças', 'mariadasgracas', 'F', 2),
('Maria Eduarda', 'mariaeduarda', 'F', 2), ('João Pedro', 'joaopedro', 'M', 2), ('José Carlos', 'josecarlos', 'M', 1);

CREATE TEMP TABLE surnames0 (name TEXT NOT NULL, slug TEXT NOT NULL, w INTEGER NOT NULL);
INSERT INTO surnames0 (name, slug, w) VALUES
('Silva', 'silva', 22), ('Santos', 'santos', 16), ('Oliveira', 'oliveira', 11), ('Souza', 'souza', 8),
('Sousa', 'sousa', 4), ('Rodrigues', 'rodrigues', 7), ('Ferreira', 'ferreira', 7), ('Alves', 'alves', 7),
('Pereira', 'pereira', 7), ('Lima', 'lima', 6), ('Gomes', 'gomes', 5), ('Costa', 'costa', 5),
('Ribeiro', 'ribeiro', 5), ('Martins', 'martins', 5), ('Carvalho', 'carvalho', 4), ('Almeida', 'almeida', 4),
('Lopes', 'lopes', 4), ('Soares', 'soares', 4), ('Fernandes', 'fernandes', 4), ('Vieira', 'vieira', 4),
('Barbosa', 'barbosa', 4), ('Rocha', 'rocha', 3), ('Dias', 'dias', 3), ('Nascimento', 'nascimento', 3),
('Andrade', 'andrade', 3), ('Moreira', 'moreira', 3), ('Nunes', 'nunes', 3), ('Marques', 'marques', 3),
('Machado', 'machado', 3), ('Mendes', 'mendes', 3), ('Freitas', 'freitas', 3), ('Cardoso', 'cardoso', 3),
('Ramos', 'ramos', 3), ('Gonçalves', 'goncalves', 3), ('Araújo', 'araujo', 3), ('Santana', 'santana', 2),
('Teixeira', 'teixeira', 2), ('Correia', 'correia', 2), ('Pinto', 'pinto', 2), ('Cavalcanti', 'cavalcanti', 2),
('Monteiro', 'monteiro', 2), ('Moura', 'moura', 2), ('Campos', 'campos', 2), ('Batista', 'batista', 2),
('Medeiros', 'medeiros', 2), ('Azevedo', 'azevedo', 2), ('Farias', 'farias', 2), ('Cunha', 'cunha', 2),
('Bezerra', 'bezerra', 2), ('Melo', 'melo', 2), ('Castro', 'castro', 2), ('Reis', 'reis', 2),
('Leite', 'leite', 2), ('Moraes', 'moraes', 2), ('Barros', 'barros', 2), ('Xavier', 'xavier', 1),
('Rezende', 'rezende', 1), ('Duarte', 'duarte', 1), ('Brito', 'brito', 1), ('Queiroz', 'queiroz', 1),
('Tavares', 'tavares', 1), ('Siqueira', 'siqueira', 1), ('Macedo', 'macedo', 1), ('Prado', 'prado', 1),
('Fonseca', 'fonseca', 1), ('Pires', 'pires', 1), ('Miranda', 'miranda', 1), ('Borges', 'borges', 1),
('Nogueira', 'nogueira', 1), ('Coelho', 'coelho', 1), ('Aguiar', 'aguiar', 1), ('Guimarães', 'guimaraes', 1),
('Sales', 'sales', 1), ('Bastos', 'bastos', 1), ('Peixoto', 'peixoto', 1), ('Vasconcelos', 'vasconcelos', 1),
('Assis', 'assis', 1), ('Rios', 'rios', 1), ('Cruz', 'cruz', 1), ('Morais', 'morais', 1), ('Amaral', 'amaral', 1),
('Matos', 'matos', 1), ('Paiva', 'paiva', 1), ('Brandão', 'brandao', 1), ('Figueiredo', 'figueiredo', 1),
('Cordeiro', 'cordeiro', 1), ('Sampaio', 'sampaio', 1), ('Torres', 'torres', 1), ('Viana', 'viana', 1),
('Holanda', 'holanda', 1), ('Magalhães', 'magalhaes', 1), ('Lacerda', 'lacerda', 1), ('Damasceno', 'damasceno', 1);

-- The weights expanded: name k of 0 … count − 1 (a weight of 3 takes three ks).
CREATE TEMP TABLE first_names (k INTEGER PRIMARY KEY, name TEXT NOT NULL, slug TEXT NOT NULL, genero TEXT NOT NULL);
INSERT INTO first_names (k, name, slug, genero)
WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 100)
SELECT (row_number() OVER (ORDER BY f.name, r.n)) - 1, f.name, f.slug, f.genero
FROM first_names0 f JOIN r ON r.n <= f.w;
CREATE TEMP TABLE surnames (k INTEGER PRIMARY KEY, name TEXT NOT NULL, slug TEXT NOT NULL);
INSERT INTO surnames (k, name, slug)
WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 100)
SELECT (row_number() OVER (ORDER BY s.name, r.n)) - 1, s.name, s.slug
FROM surnames0 s JOIN r ON r.n <= s.w;
