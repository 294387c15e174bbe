"""mtkit: machine-translation training on the Hugging Face stack."""

__version__ = "0.1.0"
