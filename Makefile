# The venv of ./run-tests when there is one (a PEP 668 Python has none of the packages)
PYTHON ?= $(if $(wildcard .venv/bin/python),.venv/bin/python,python3)
.PHONY: test unit lint bench catalogue
test:
	./run-tests
unit:
	$(PYTHON) -m pytest tests/unit tests/cli
lint:
	$(PYTHON) -m ruff check kubectl_kcache tests bench krew-manifest examples && $(PYTHON) -m ruff format --check kubectl_kcache tests bench krew-manifest examples && $(PYTHON) -m mypy && lint-imports
bench:
	$(PYTHON) -m bench.run
catalogue:
	$(PYTHON) -m kubectl_kcache.checks.catalogue > docs/checks.md
	$(PYTHON) -m kubectl_kcache.checks.catalogue --rbac > deploy/doctor-rbac.yaml
# dist: the archives of the release in plugin.yaml, built again from its commit (what its sha256 say);
# dist-head: the archives of this tree, with their own dist/plugin.yaml; release: see docs/install.md
.PHONY: dist dist-head release
dist:
	python3 krew-manifest/release.py --rebuild --out dist
dist-head:
	python3 krew-manifest/build.py --out dist
release:
	python3 krew-manifest/release.py --out dist
