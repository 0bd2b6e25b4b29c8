-- Refresh-token families (RFC 9700 §4.14.2, RFC 6749 §4.1.2 and §10.4).
-- Every refresh token rotated from another shares its family: the first
-- token of a login at /api/token/pair/ starts one (its own jti), as does an
-- authorization code at /oauth/token/ ('code:<client_id>:<code hash>').
-- When a token that was already rotated is presented again, or a code is
-- redeemed twice, someone holds a copy: every current token of the family
-- is revoked (rotated_at set), whoever the legitimate holder was.
ALTER TABLE refresh_tokens ADD COLUMN family TEXT;
UPDATE refresh_tokens SET family = jti;
ALTER TABLE refresh_tokens ALTER COLUMN family SET NOT NULL;
-- Revocation touches only the family's current tokens.
CREATE INDEX refresh_tokens_current_family_idx ON refresh_tokens (family) WHERE rotated_at IS NULL;
