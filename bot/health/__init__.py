"""The status file a running bot or worker rewrites, and the check that reads it.

``status`` and ``check`` import nothing but the standard library, so the container's
health check (``mnemo-healthcheck``) starts in a fraction of a second; ``reporter`` runs
inside the process and is imported by the commands that run one.
"""
