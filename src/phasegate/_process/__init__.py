"""Work in a child process of its own: a pickled job on stdin, a session (process group) of
its own, and an end that takes everything the child started with it."""
