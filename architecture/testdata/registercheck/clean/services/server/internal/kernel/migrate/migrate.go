package migrate

const bookkeeping = `
CREATE SCHEMA IF NOT EXISTS bothy_meta;
CREATE TABLE IF NOT EXISTS bothy_meta.schema_migrations (
    schema_name text NOT NULL,
    version int NOT NULL
)`
