"""Conway's game of life on a torus with np.roll."""
import numpy as np

board = np.zeros((12, 12), dtype=np.int8)
board[1, 2] = board[2, 3] = board[3, 1] = board[3, 2] = board[3, 3] = 1  # glider
board[7:10, 8] = 1  # blinker
history = []
for step in range(8):
    n = sum(np.roll(np.roll(board, dy, 0), dx, 1)
            for dy in (-1, 0, 1) for dx in (-1, 0, 1) if (dy, dx) != (0, 0))
    board = ((n == 3) | ((board == 1) & (n == 2))).astype(np.int8)
    history.append(int(board.sum()))
print(history)
print("\n".join("".join(".#"[c] for c in row) for row in board))
alive = np.argwhere(board)
print(alive.min(axis=0), alive.max(axis=0))
print(np.count_nonzero(board, axis=0))
RESULT = {"board": board, "history": np.array(history)}
