"""`python -m scrubber.cli`: the same as the `scrub` console script."""

from scrubber.cli.app import run

if __name__ == "__main__":
    run()
