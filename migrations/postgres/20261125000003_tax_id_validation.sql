-- Tax-id validation (issue 12): attempts per account (at most 5 in 24 h,
-- the rule lives in the domain; a row lock on the user serialises the
-- check-and-insert), and the CPF of a validated account is frozen.
CREATE TABLE tax_id_attempts (
    id            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id       BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    attempted_at  TIMESTAMPTZ NOT NULL
);
CREATE INDEX tax_id_attempts_user_idx ON tax_id_attempts (user_id, attempted_at);
CREATE INDEX tax_id_attempts_attempted_at_idx ON tax_id_attempts (attempted_at);

-- Once validated through the tax id, the account's CPF cannot change
-- (whatever writes it: the service, an operator's SQL).
CREATE FUNCTION users_refuse_validated_cpf_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the CPF of a validated account cannot change' USING ERRCODE = 'check_violation';
END
$$;
CREATE TRIGGER users_validated_cpf_frozen BEFORE UPDATE OF cpf ON users
    FOR EACH ROW WHEN (OLD.receita_validated AND NEW.cpf IS DISTINCT FROM OLD.cpf)
    EXECUTE FUNCTION users_refuse_validated_cpf_change();
