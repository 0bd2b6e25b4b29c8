-- OpenID Connect on the OAuth2 provider (issue 14, item 2).

-- What the ID token of a code needs: the authorization request's nonce
-- (echoed exactly) and when the person logged in (the login session's
-- start: the ID token's auth_time). The granted scope may now start with
-- "openid" (a protocol scope beside the profile scopes).
ALTER TABLE oauth_codes
    ADD COLUMN nonce TEXT CHECK (octet_length(nonce) BETWEEN 1 AND 512),
    ADD COLUMN auth_time TIMESTAMPTZ;

-- Where RP-initiated logout (/oauth/logout/) may send the browser
-- afterwards, matched exactly like redirect_uris; none by default (then
-- the provider shows its own page).
ALTER TABLE oauth_clients
    ADD COLUMN post_logout_redirect_uris TEXT[] NOT NULL DEFAULT '{}';
