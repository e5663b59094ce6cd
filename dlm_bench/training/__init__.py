"""The Trainer (training loop outside the models) and the stage-1 model store."""
