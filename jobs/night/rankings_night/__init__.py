"""The night around `rankings aggregate` (rankings-night): Python 3's standard library, each module tested alone."""
