import adapters.matrix


def test_public_names_are_the_intended_ones() -> None:
    assert sorted(adapters.matrix.__all__) == [
        "ConversationCore",
        "MatrixAdapter",
        "MatrixAdapterError",
        "MatrixConfigError",
        "MatrixConnection",
        "MatrixLoginError",
        "MatrixStoreLost",
        "connection_from_settings",
        "log_in",
    ]
    assert all(hasattr(adapters.matrix, name) for name in adapters.matrix.__all__)
