"""IR v10/v11 on disk: the XML and its .bin read and written, the weights record, and
the canonical comparison of two IR files."""
