-- The panel's account search by text (issue 28): an FTS5 trigram index
-- over the username, name and address, so that a search of three
-- characters or more is answered from the index instead of reading every
-- account. The index holds no copy of the text (external content: it
-- reads `users`); triggers keep it in step with every insert, change and
-- delete.
CREATE VIRTUAL TABLE users_search USING fts5(
    username, name, email,
    content = 'users', content_rowid = 'id',
    tokenize = 'trigram case_sensitive 0'
);

INSERT INTO users_search (users_search) VALUES ('rebuild');

CREATE TRIGGER users_search_insert AFTER INSERT ON users BEGIN
    INSERT INTO users_search (rowid, username, name, email) VALUES (new.id, new.username, new.name, new.email);
END;

CREATE TRIGGER users_search_delete AFTER DELETE ON users BEGIN
    INSERT INTO users_search (users_search, rowid, username, name, email)
    VALUES ('delete', old.id, old.username, old.name, old.email);
END;

CREATE TRIGGER users_search_update AFTER UPDATE OF username, name, email ON users BEGIN
    INSERT INTO users_search (users_search, rowid, username, name, email)
    VALUES ('delete', old.id, old.username, old.name, old.email);
    INSERT INTO users_search (rowid, username, name, email) VALUES (new.id, new.username, new.name, new.email);
END;
