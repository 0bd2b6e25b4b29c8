-- Wrong second-factor codes count in a budget of their own per account
-- (issue 43): keys 'code:<username>' beside 'username:' and 'address:'.
ALTER TABLE login_failures DROP CONSTRAINT login_failures_key_check;
ALTER TABLE login_failures ADD CONSTRAINT login_failures_key_check
    CHECK (key ~ '^(username|client|address|code):.');
