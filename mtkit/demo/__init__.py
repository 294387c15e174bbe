"""The built-in demo corpus: a seeded grammar (word tables in ``grammar/``) producing English→Spanish pairs with a
planted gender skew."""
