"""Generated Python for plans: the toolkit that writes and compiles it, straight-line code
for a plan's steps, and one Python loop for a Loop/TensorIterator body."""
