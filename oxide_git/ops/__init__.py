"""One module per operation (verb): checkpoint, resume, fork, rewind, undo, rm, gc, share, ..."""
