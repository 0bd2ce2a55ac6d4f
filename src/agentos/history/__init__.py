"""A team's shared history of Ancha runs: uploads, storage and what it shows."""
