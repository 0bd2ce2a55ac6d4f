"""A replica of GitHub: REST, GraphQL and git over smart HTTP, as one tool folder."""
