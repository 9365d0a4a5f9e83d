"""The user documentation (Markdown), installed with the arena as `arena.docs` so that `arena docs TOPIC` can show
it wherever the arena was installed from."""
