# Stand-in for ollama/ollama (no registry here): the project's Ollama-shaped server. Built on
# the Mnemo image, which already has Python, fastembed and the memory package it imports.
ARG BASE=mnemo:local
FROM ${BASE}
USER root
COPY standin /standin
COPY model /standin/model
RUN printf '#!/bin/sh\nexec python -m tests.deploy.standins.ollama_cli "$@"\n' > /usr/local/bin/ollama \
    && chmod 755 /usr/local/bin/ollama
ENV PYTHONPATH=/standin
WORKDIR /
HEALTHCHECK NONE
ENTRYPOINT ["/usr/local/bin/ollama"]
CMD ["serve"]
