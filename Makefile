.PHONY: test unit lint bench catalogue
test:
	./run-tests
unit:
	python3 -m pytest tests/unit tests/cli
lint:
	python3 -m ruff check kubectl_kcache tests bench krew-manifest examples && python3 -m mypy && lint-imports
bench:
	python3 -m bench.run
catalogue:
	python3 -m kubectl_kcache.checks.catalogue > docs/checks.md
.PHONY: dist release
dist:
	python3 krew-manifest/build.py --out dist
release:
	python3 krew-manifest/release.py --out dist
