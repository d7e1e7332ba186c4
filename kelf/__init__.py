"""What tpbench reads from a kernel module's ELF file, for the runner and the analysis alike:
the machines it knows, the __jump_table entries, and the code the kernel rewrites at load."""
