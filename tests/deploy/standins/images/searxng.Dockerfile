# Stand-in for searxng/searxng (no registry here): the project's SearXNG-shaped server.
FROM python:3.11-slim
COPY standin /standin
ENV PYTHONPATH=/standin
ENTRYPOINT ["python", "-m", "tests.deploy.standins.searxng"]
