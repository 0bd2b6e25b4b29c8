-- The login's authentication context travels with the code into the ID
-- token and the client's tokens (issue 23).
ALTER TABLE oauth_codes ADD COLUMN acr TEXT;
ALTER TABLE oauth_codes ADD COLUMN amr TEXT;
