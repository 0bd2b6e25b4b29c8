-- The concurrent-refresh grace window (docs/decisions.md). A rotation keeps,
-- beside the token it rotated out, the jti of the token it rotated it into
-- and the pair it answered, sealed with a key derived from the old token's
-- text (which the database never holds): a copy of the old token presented
-- again within refresh_grace_secs, while that successor is still current,
-- is answered the same pair instead of revoking the family. The periodic
-- purge clears the sealed pairs once their window is over; a replay outside
-- the window never reads them.
ALTER TABLE refresh_tokens ADD COLUMN successor_jti TEXT;
ALTER TABLE refresh_tokens ADD COLUMN successor_sealed BYTEA;
CREATE INDEX refresh_tokens_sealed_idx ON refresh_tokens (rotated_at) WHERE successor_sealed IS NOT NULL;
