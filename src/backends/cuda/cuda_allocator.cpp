// placeholder: written with the CUDA plumbing
