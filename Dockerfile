# The reconcile controller image: `kubectl-kcache reconcile --leader-elect` (see deploy/).
FROM python:3.12-slim
WORKDIR /src
COPY setup.cfg pyproject.toml README.md LICENSE ./
COPY kubectl_kcache ./kubectl_kcache
RUN pip install --no-cache-dir . && rm -rf /src
USER 65532:65532
ENTRYPOINT ["kubectl-kcache"]
CMD ["reconcile", "--leader-elect"]
