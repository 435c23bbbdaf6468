"""The command-line form of ocltune_torch.tune (see __main__.py); the function is ocltune_torch.tune_model.tune."""
