"""Finding secrets in the strings a transcript holds, with exact spans."""
