"""The replay player: a finished match as one seat saw it, on the table's own screens (``quatro replay``)."""
