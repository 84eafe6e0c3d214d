"""Where the suite's own files are, for test files at any depth under tests/ (they mirror src/morphcpt/): the tests
folder, the repository root, the test data (`data/official`: files in the official formats) and the fake commands
(`fakes/`)."""

from pathlib import Path

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
DATA = TESTS / "data"
OFFICIAL = DATA / "official"
FAKES = TESTS / "fakes"
