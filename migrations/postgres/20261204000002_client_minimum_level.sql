-- An application may require its users to have logged in through gov.br
-- at a minimum reliability level (issue 25): NULL requires none.
ALTER TABLE oauth_clients ADD COLUMN minimum_govbr_level TEXT
    CHECK (minimum_govbr_level IN ('bronze', 'prata', 'ouro'));
