def unrelated() -> int:
    return 1
