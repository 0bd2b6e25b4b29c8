-- Logins brokered through gov.br or another OpenID provider (issue 25): an
-- account's link to a provider's subject, made at the first login through
-- it. `proves_cpf`: the link is gov.br's, whose subject is the account's
-- CPF, proven from then on. gov.br's reliability level and seals are kept
-- with when they were read, refreshed at every login through it.
CREATE TABLE federated_links (
    provider      TEXT NOT NULL,
    subject       TEXT NOT NULL,
    user_id       BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    linked_at     BIGINT NOT NULL,
    proves_cpf    BOOLEAN NOT NULL DEFAULT FALSE,
    level         TEXT CHECK (level IN ('bronze', 'prata', 'ouro')),
    seals         TEXT NOT NULL DEFAULT '[]',
    level_read_at BIGINT,
    PRIMARY KEY (provider, subject)
);
-- One link per provider and account; an account's links by its id.
CREATE UNIQUE INDEX federated_links_user_idx ON federated_links (user_id, provider);
