-- An application may require its users to pass a second factor (issue 23).
ALTER TABLE oauth_clients ADD COLUMN requires_second_factor INTEGER NOT NULL DEFAULT 0 CHECK (requires_second_factor IN (0, 1));
