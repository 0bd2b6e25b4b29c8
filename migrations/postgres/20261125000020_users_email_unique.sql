-- Sign-up (issue 12): an e-mail address belongs to one account, ignoring
-- case, like the username and the CPF. Accounts without an address (''),
-- which operators may create, are left out of the index.
--
-- Addresses already shared by several accounts are not changed here (which
-- account keeps one is for the operator to decide): the migration stops
-- with a message naming the query that lists them, and runs once they are
-- resolved.
DO $$
DECLARE
    shared BIGINT;
BEGIN
    SELECT count(*) INTO shared FROM (
        SELECT 1 FROM users WHERE email <> '' GROUP BY lower(email) HAVING count(*) > 1
    ) AS duplicates;
    IF shared > 0 THEN
        RAISE EXCEPTION 'e-mail addresses must be unique, but % address(es) are shared by more than one account (ignoring case). List them with: SELECT lower(email), array_agg(username) FROM users WHERE email <> '''' GROUP BY lower(email) HAVING count(*) > 1; then give each account its own address (or none), and run the migrations again.', shared
            USING ERRCODE = 'unique_violation';
    END IF;
END
$$;

CREATE UNIQUE INDEX users_email_lower_key ON users (lower(email)) WHERE email <> '';
