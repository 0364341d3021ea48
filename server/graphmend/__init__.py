"""GraphMend: find and mend torch.compile graph breaks."""

__version__ = "0.1.0"
