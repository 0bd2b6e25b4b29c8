-- Remembered consent (issue 12): the scopes a person approved for a client.
-- An authorization whose scopes lie within the grant skips the consent page;
-- approving more widens it (union, one INSERT ... ON CONFLICT statement, so
-- concurrent widenings all end up in the union). Revoking deletes the row;
-- the profile read answers a client's tokens only while the row exists.
CREATE TABLE oauth_grants (
    user_id           BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    client_id         TEXT NOT NULL REFERENCES oauth_clients (client_id) ON DELETE CASCADE,
    -- Approved scope names, sorted; the required ones (dados_publicos, cpf,
    -- email) count as granted whether or not they are here.
    scopes            TEXT[] NOT NULL CHECK (scopes <@ ARRAY[
        'dados_publicos', 'cpf', 'email', 'receita_federal', 'cnes',
        'experiencia_profissional', 'formacao_academica', 'cursos_cdp'
    ]::TEXT[]),
    first_granted_at  TIMESTAMPTZ NOT NULL,
    last_used_at      TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (user_id, client_id)
);
-- Deleting a client deletes its grants.
CREATE INDEX oauth_grants_client_id_idx ON oauth_grants (client_id);

-- Clients already in use keep working: each redeemed authorization code
-- still on file becomes a grant of the scopes it carried (the union per
-- user and client), first granted and last used at the codes' times.
INSERT INTO oauth_grants (user_id, client_id, scopes, first_granted_at, last_used_at)
SELECT c.user_id, c.client_id,
       ARRAY(SELECT DISTINCT s FROM unnest(string_to_array(string_agg(c.scope, ' '), ' ')) AS s
             WHERE s IN ('dados_publicos', 'cpf', 'email', 'receita_federal', 'cnes',
                         'experiencia_profissional', 'formacao_academica', 'cursos_cdp')
             ORDER BY s),
       min(c.issued_at), max(c.issued_at)
FROM oauth_codes c
WHERE c.used_at IS NOT NULL
GROUP BY c.user_id, c.client_id;
