-- Whether the person confirmed the account's address through a link sent
-- to it (issue 24). Existing, pre-registered and imported accounts start
-- unconfirmed; a change of address clears it.
ALTER TABLE users ADD COLUMN email_verified BOOLEAN NOT NULL DEFAULT FALSE;
