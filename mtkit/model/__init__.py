"""What the network is: architecture presets, compute precision, LoRA adapters, the training loss and FLOP counts."""
