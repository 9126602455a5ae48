"""The figure book and its catalogue: one place where every explained number is defined."""

from .book import FigureBook, FigureBookError, FigureDef, SourceKind, Unit, UnrecordedBook, definitions

__all__ = [
    "FigureBook",
    "FigureBookError",
    "FigureDef",
    "SourceKind",
    "Unit",
    "UnrecordedBook",
    "definitions",
]
