-- A refresh token ended by a revocation (an operator deactivating the
-- account or setting its password, a family revoked after a replay) is
-- marked apart from one ended by rotation: presenting a revoked token again
-- is refused, but it is no sign of a stolen copy, so it neither logs a
-- replay warning nor revokes its family a second time.
ALTER TABLE refresh_tokens ADD COLUMN revoked BOOLEAN NOT NULL DEFAULT FALSE;
