-- What a restore needs to know of the database it replaces: its name and owner, whether the
-- connecting role may create a database beside it and rename and drop it, the encoding and
-- locale the fresh database copies, and whether it holds bothy's instance schema. The locale
-- provider's columns differ between PostgreSQL versions (daticulocale became datlocale in 17),
-- so they are read by name from the row's JSON.
SELECT d.datname,
       pg_catalog.pg_get_userbyid(d.datdba),
       (r.rolsuper OR (r.rolcreatedb AND pg_catalog.pg_has_role(current_user, d.datdba, 'MEMBER'))),
       pg_catalog.pg_encoding_to_char(d.encoding),
       d.datcollate,
       d.datctype,
       coalesce(pg_catalog.to_jsonb(d) ->> 'datlocprovider', 'c'),
       coalesce(pg_catalog.to_jsonb(d) ->> 'datlocale', pg_catalog.to_jsonb(d) ->> 'daticulocale', ''),
       EXISTS (SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = $1)
FROM pg_catalog.pg_database d, pg_catalog.pg_roles r
WHERE d.datname = pg_catalog.current_database() AND r.rolname = current_user;
