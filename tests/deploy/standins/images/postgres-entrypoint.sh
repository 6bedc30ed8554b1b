#!/bin/sh
# As the official postgres image: create the cluster on first start (refusing without a
# password), then run the server as the postgres user, listening on every address.
set -eu
if [ ! -s "$PGDATA/PG_VERSION" ]; then
    if [ -z "${POSTGRES_PASSWORD:-}" ]; then
        echo "Error: Database is uninitialized and superuser password is not specified." >&2
        exit 1
    fi
    chown -R postgres:postgres "$PGDATA"
    printf '%s\n' "$POSTGRES_PASSWORD" > /tmp/pwfile
    chown postgres /tmp/pwfile
    setpriv --reuid=postgres --regid=postgres --init-groups \
        initdb -D "$PGDATA" -U "${POSTGRES_USER:-postgres}" --pwfile=/tmp/pwfile \
        --auth-local=trust --auth-host=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8
    rm -f /tmp/pwfile
    echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
    if [ "${POSTGRES_DB:-postgres}" != postgres ]; then
        echo "CREATE DATABASE \"$POSTGRES_DB\";" | setpriv --reuid=postgres \
            --regid=postgres --init-groups postgres --single -D "$PGDATA" postgres >/dev/null
    fi
fi
exec setpriv --reuid=postgres --regid=postgres --init-groups \
    postgres -D "$PGDATA" -c listen_addresses='*' -c unix_socket_directories=/var/run/postgresql
