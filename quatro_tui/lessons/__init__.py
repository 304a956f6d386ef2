"""The guided first match (``quatro learn``): each game's lesson as steps, each checked from the client's state, and
the coach that says them on the real screens."""

#: The names the lesson's private server knows them by (``quatro_server.games.quatro.lesson``, ``quatro_server.timing``): its
#: bots' level and its timing profile.
LESSON_LEVEL = "lesson"
LESSON_PROFILE = "lesson"
