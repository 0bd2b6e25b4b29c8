-- Administration of applications (issue 13, item 2).

-- A deactivated application (is_active = FALSE) can neither start an
-- authorization, nor redeem a code, nor refresh, and its access tokens are
-- refused at the profile read at once. Reactivating it restores all of
-- that; nothing is deleted.
ALTER TABLE oauth_clients ADD COLUMN is_active BOOLEAN NOT NULL DEFAULT TRUE;
