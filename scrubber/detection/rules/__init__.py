"""Our own detectors, one small declarative file each (registered in `catalog.py`)."""
