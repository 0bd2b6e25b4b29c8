-- An application may require its users to pass a second factor (issue 23).
ALTER TABLE oauth_clients ADD COLUMN requires_second_factor BOOLEAN NOT NULL DEFAULT FALSE;
