"""`make soak`: a long, hostile day on one repository (see ``__main__``)."""
