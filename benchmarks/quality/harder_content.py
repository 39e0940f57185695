"""What the harder users of the benchmark say: time as people say it, replies, generic turns.

Version 2 of the dataset adds users whose histories hold the cases retrieval gets wrong on real
conversations (issue 13): vague recency, "before / after" an event told in the event's own
session, loose calendar dates, relative phrases with their own anchor, time words the memory
itself uses, short generic turns that look like the question, replies whose meaning is in the
turn they answer, the current state of something that changed over the year, and questions that
need several turns. All of it is invented for this benchmark.

Placeholders: ``{u}`` the user's first name, ``{c}`` a companion's first name, ``{p}`` another
person's first name, ``{when}`` the time wording of a question.
"""

from __future__ import annotations

# First names for the harder users' companions and acquaintances (none is used in version 1).
EXTRA_NAMES = [
    "Ottilie", "Brigid", "Svea", "Maren", "Ines", "Fenna", "Liesel", "Tamsin", "Odile", "Hester",
    "Alba", "Romilly", "Sunniva", "Clemence", "Ailsa", "Marisol", "Birgit", "Edda", "Linnea", "Solveig",
    "Casimir", "Anselm", "Evander", "Lorcan", "Matthias", "Ruairi", "Thaddeus", "Wendel", "Ambrose",
    "Cyprian", "Ferdinand", "Ignatius", "Leopold", "Oisin", "Percival", "Rasmus", "Tobiah", "Aurelio",
    "Benedikt", "Cormac", "Dorian", "Emrys", "Florin", "Hannes", "Jarek",
]  # fmt: skip

# -- vague recency: a topic comes back over the year; "lately" means its latest mention ----------
RECENT_TOPICS: dict[str, dict] = {
    "sourdough": {
        "label": "the sourdough",
        "words": ["sourdough", "starter", "loaf", "bread"],
        "statements": [
            ("Started a sourdough starter in a glass jar, it smells like old socks.", "a new starter"),
            ("My sourdough came out flat as a pancake, the starter is too weak.", "a flat loaf"),
            ("Finally a sourdough loaf with a proper open crumb, I nearly cried.", "a loaf with open crumb"),
            ("Gave half my sourdough starter to the neighbours, now the whole floor bakes.", "shared it"),
        ],
    },
    "allotment": {
        "label": "the allotment",
        "words": ["allotment", "plot"],
        "statements": [
            ("Got an allotment plot at last, after three years on the waiting list.", "got a plot"),
            ("The allotment is mostly bindweed, I dug for four hours and found one potato.", "weeds"),
            ("Slugs ate every lettuce on the allotment, a massacre.", "slugs ate the lettuces"),
            ("Harvested a wheelbarrow of squash from the allotment, soup for months.", "squash harvest"),
        ],
    },
    "novel": {
        "label": "the novel",
        "words": ["novel", "manuscript", "chapter", "chapters"],
        "statements": [
            ("I've started writing a novel, a murder on a night train, very original.", "started it"),
            ("Threw away the first three chapters of the novel, they were awful.", "scrapped chapters"),
            ("The novel manuscript hit sixty thousand words today!", "60,000 words"),
            ("Sent the novel manuscript to two literary agents, now I wait.", "sent it to agents"),
        ],
    },
    "boat": {
        "label": "the old boat",
        "words": ["boat", "hull", "varnish"],
        "statements": [
            ("Bought a tiny wooden boat that needs everything redone, what was I thinking.", "bought it"),
            ("Sanded the hull of the boat all weekend, I'm made of dust.", "sanded the hull"),
            ("Third coat of varnish on the boat, it finally looks like something.", "varnished"),
            ("The boat floated! Took her round the harbour and she didn't leak once.", "first sail"),
        ],
    },
    "choir": {
        "label": "the choir",
        "words": ["choir", "alto", "altos", "tenor"],
        "statements": [
            ("Joined a community choir, they put me with the altos.", "joined, singing alto"),
            ("Choir is doing a Brahms piece and the German is defeating me.", "Brahms, hard German"),
            ("Choir concert in the cathedral went beautifully, my mum cried.", "a concert went well"),
            ("The choir director quit, so now nobody knows who runs rehearsals.", "the director quit"),
        ],
    },
    "chess": {
        "label": "chess",
        "words": ["chess", "rating"],
        "statements": [
            ("Playing online chess every lunch break, it's a problem.", "playing every lunch"),
            ("My chess rating dropped eighty points in one evening, I need to stop.", "rating dropped"),
            ("Won my first over-the-board chess tournament game, against a twelve-year-old.", "won a game"),
            ("Chess club made me captain for the league team, no idea why.", "made captain"),
        ],
    },
    "shoulder": {
        "label": "the shoulder",
        "words": ["shoulder"],
        "statements": [
            ("My shoulder clicks every time I lift my arm, not painful, just creepy.", "it clicks"),
            ("Shoulder got properly sore after swimming, ice pack on it now.", "sore after swimming"),
            ("The shoulder scan showed a small tear, nothing needs surgery.", "a small tear, no surgery"),
            ("Shoulder exercises are working, I can reach the top shelf again.", "much better"),
        ],
    },
    "van": {
        "label": "the van conversion",
        "words": ["van", "campervan"],
        "statements": [
            ("We bought an old delivery van to turn into a camper, it smells of parcels.", "bought a van"),
            ("Insulated the van walls with sheep's wool, itchy but cosy.", "insulated with wool"),
            ("Fitted a little wood burner in the van, the landlord of the yard is nervous.", "a wood burner"),
            ("First night sleeping in the finished van, by a lake, silent and perfect.", "first night in it"),
        ],
    },
    "bees": {
        "label": "the beehive",
        "words": ["bees", "hive", "beehive", "honey"],
        "statements": [
            ("Picked up my first bees today, a whole buzzing box of them on the back seat.", "got bees"),
            ("The hive swarmed and half the bees are in a tree next door.", "they swarmed"),
            ("Found the queen in the hive, she has a little blue dot on her back.", "found the queen"),
            ("Took eleven jars of honey off the hive, everyone's getting honey for Christmas.", "honey jars"),
        ],
    },
    "flatmate": {
        "label": "the flatmate",
        "words": ["flatmate"],
        "statements": [
            ("New flatmate moved in, he has more plants than clothes.", "a new flatmate moved in"),
            ("Flatmate keeps eating my yoghurts and denying it.", "eats the yoghurts"),
            ("Had a proper talk with the flatmate about the cleaning rota, it went fine.", "rota talk"),
            ("My flatmate is moving out to live with his girlfriend, I need a new one.", "moving out"),
        ],
    },
}
RECENT_QUESTIONS = [
    "What has {u} been saying about {label} lately?",
    "How is {label} going for {u} these days?",
    "What's the latest on {label} from {u}?",
    "Any recent news from {u} about {label}?",
    "What did {u} say about {label} recently?",
    "Where do things stand with {label} for {u} at the moment?",
]

# -- before / after an event: the answer sits in the event's own session ------------------------
# "before": the anchor turn (event announced) comes first, the evidence later in that session.
# "after": the evidence comes first, then the turn that names the event (told the day after).
ANCHOR_EVENTS: list[dict] = [
    {
        "key": "half_marathon",
        "event": "the half marathon",
        "words": ["marathon"],
        "before": {
            "anchor": "The half marathon is on Sunday, I've laid out my kit like a crime scene.",
            "evidence": "Honestly I'm scared my left calf cramps again around kilometre fifteen.",
            "ev_words": ["calf", "cramp", "cramps"],
            "question": "What was {u} worried about before the half marathon?",
            "answer": "the left calf cramping",
            "distractor": "My calf cramped at five-a-side last night, hopping around like an idiot.",
        },
        "after": {
            "evidence": "Can barely get down the stairs today, my thighs are on fire.",
            "ev_words": ["thighs"],
            "anchor": "The half marathon yesterday went well though, one hour fifty-eight!",
            "question": "How did {u}'s legs feel after the half marathon?",
            "answer": "sore thighs, could barely do stairs",
            "distractor": "Took the stairs at work all week, my thighs are not thanking me.",
        },
    },
    {
        "key": "interview",
        "event": "the job interview",
        "words": ["interview"],
        "before": {
            "anchor": "Job interview at the museum is tomorrow at ten, I've ironed a shirt and everything.",
            "evidence": (
                "I keep rehearsing my answer about salary expectations and it sounds worse each time."
            ),
            "ev_words": ["salary"],
            "question": "What was {u} rehearsing before the job interview?",
            "answer": "the answer about salary expectations",
            "distractor": "Salary review at the end of the month, not expecting much.",
        },
        "after": {
            "evidence": (
                "They want me to start on the first, and I get a staff pass to every museum in the city."
            ),
            "ev_words": ["staff", "pass"],
            "anchor": "So the job interview yesterday at the museum, they offered it to me on the spot!",
            "question": "What happened after {u}'s job interview?",
            "answer": "an offer on the spot, starting on the first with a staff pass",
            "distractor": "The staff canteen at my old job did a decent curry, I miss it.",
        },
    },
    {
        "key": "wedding",
        "event": "the wedding",
        "words": ["wedding"],
        "before": {
            "anchor": "My cousin's wedding is this Saturday and I'm giving a reading.",
            "evidence": "Still haven't found shoes that go with the green dress, panic level rising.",
            "ev_words": ["shoes", "dress"],
            "question": "What was {u} still missing before the wedding?",
            "answer": "shoes to go with the green dress",
            "distractor": "Returned the shoes I bought online, they pinched at the toes.",
        },
        "after": {
            "evidence": "I have a blister the size of a coin and I lost my voice from singing.",
            "ev_words": ["blister"],
            "anchor": "The wedding was beautiful, my cousin cried through the whole reading.",
            "question": "What state was {u} in after the wedding?",
            "answer": "a big blister and no voice",
            "distractor": "New hiking boots gave me a blister on day one, of course.",
        },
    },
    {
        "key": "exam",
        "event": "the accountancy exam",
        "words": ["exam", "accountancy"],
        "before": {
            "anchor": "Accountancy exam on Thursday, module four, the one everybody fails.",
            "evidence": "The deferred tax questions make no sense to me, I've read that section five times.",
            "ev_words": ["deferred"],
            "question": "Which part was {u} struggling with before the accountancy exam?",
            "answer": "the deferred tax questions",
            "distractor": "Our train got deferred to a replacement bus, deferred is a generous word for it.",
        },
        "after": {
            "evidence": "Slept fourteen hours straight, I think my brain just switched off.",
            "ev_words": ["fourteen"],
            "anchor": "The accountancy exam is done, I think I passed, the tax section was fine.",
            "question": "What did {u} do after the accountancy exam?",
            "answer": "slept fourteen hours",
            "distractor": "Worked fourteen hours yesterday, never again.",
        },
    },
    {
        "key": "surgery",
        "event": "the knee operation",
        "words": ["operation", "surgeon"],
        "before": {
            "anchor": "Knee operation is booked for Monday morning, no food after midnight.",
            "evidence": "Stocked the freezer with twelve portions of soup so I don't have to stand and cook.",
            "ev_words": ["freezer", "soup", "portions"],
            "question": "How did {u} prepare before the knee operation?",
            "answer": "filled the freezer with twelve portions of soup",
            "distractor": "The freezer door doesn't close properly, everything is covered in frost.",
        },
        "after": {
            "evidence": "The crutches are a nightmare, I knocked a glass off the table with one.",
            "ev_words": ["crutches"],
            "anchor": "The knee operation went fine, the surgeon says it was a clean repair.",
            "question": "What trouble did {u} have after the knee operation?",
            "answer": "struggling with the crutches",
            "distractor": "Lent my old crutches to a colleague who broke his toe.",
        },
    },
    {
        "key": "concert",
        "event": "the piano recital",
        "words": ["recital", "piano"],
        "before": {
            "anchor": "Piano recital on Friday evening, I'm playing the Chopin nocturne.",
            "evidence": (
                "My hands shake so much in rehearsal that I keep missing the left-hand jump in bar twelve."
            ),
            "ev_words": ["hands", "shake", "rehearsal"],
            "question": "What was going wrong for {u} in rehearsal before the piano recital?",
            "answer": "shaking hands, missing the left-hand jump",
            "distractor": "My hands are so dry from the cold, they crack at the knuckles.",
        },
        "after": {
            "evidence": "A woman from the audience came up and asked if I give lessons, I was so flattered.",
            "ev_words": ["audience", "lessons"],
            "anchor": "The piano recital last night went fine, I only fluffed one bar.",
            "question": "Who approached {u} after the piano recital?",
            "answer": "a woman from the audience asking about lessons",
            "distractor": "Thinking about taking lessons in something new, maybe drawing.",
        },
    },
    {
        "key": "housewarming",
        "event": "the housewarming",
        "words": ["housewarming"],
        "before": {
            "anchor": "Housewarming is on Saturday, twenty-five people said yes, the flat fits about ten.",
            "evidence": "Ordered a keg of cider and two hundred paper cups, hope that's enough.",
            "ev_words": ["keg", "cider", "cups"],
            "question": "What drinks did {u} order before the housewarming?",
            "answer": "a keg of cider and two hundred cups",
            "distractor": "Cider at the pub quiz was flat, we complained and got a free round.",
        },
        "after": {
            "evidence": "Found a stranger's scarf, three forks and a whole cake in the bathtub.",
            "ev_words": ["scarf", "bathtub", "forks"],
            "anchor": "The housewarming was chaos in the best way, we danced until three.",
            "question": "What did {u} find in the flat after the housewarming?",
            "answer": "a scarf, three forks and a cake in the bathtub",
            "distractor": "Knitting a scarf for my nephew, it's getting very long.",
        },
    },
    {
        "key": "flight_exam",
        "event": "the driving theory test",
        "words": ["theory"],
        "before": {
            "anchor": "Driving theory test is on Wednesday, fifty questions, I need forty-three right.",
            "evidence": "The hazard perception clips are my weak spot, I click way too early.",
            "ev_words": ["hazard", "perception", "clips"],
            "question": "What was {u}'s weak spot before the driving theory test?",
            "answer": "the hazard perception clips (clicking too early)",
            "distractor": "Watched some hazard videos with my brother, he scored worse than me.",
        },
        "after": {
            "evidence": "Booked my first real driving lesson for next Tuesday with an instructor called Gus.",
            "ev_words": ["instructor", "gus"],
            "anchor": "Passed the driving theory test yesterday, forty-eight out of fifty!",
            "question": "What did {u} book after the driving theory test?",
            "answer": "a first driving lesson with an instructor called Gus",
            "distractor": "My swimming instructor retired, the new one shouts a lot.",
        },
    },
]

ANCHOR_EVENTS += [
    {
        "key": "audition",
        "event": "the theatre audition",
        "words": ["audition"],
        "before": {
            "anchor": "Theatre audition is on Tuesday, I have to do a monologue and sing sixteen bars.",
            "evidence": "I picked the gravedigger speech, but I keep forgetting the line about the skull.",
            "ev_words": ["gravedigger", "skull"],
            "question": "Which speech did {u} pick before the theatre audition?",
            "answer": "the gravedigger speech",
            "distractor": "Watched a documentary about a gravedigger in Vienna, oddly moving.",
        },
        "after": {
            "evidence": "They've put me down as the understudy for the landlady, which counts, right?",
            "ev_words": ["understudy"],
            "anchor": "The theatre audition yesterday was terrifying, but the director laughed at my joke.",
            "question": "What part did {u} get after the theatre audition?",
            "answer": "understudy for the landlady",
            "distractor": "My friend is an understudy in a musical and has never once been on.",
        },
    },
    {
        "key": "eye_test",
        "event": "the eye test",
        "words": ["optician", "eye"],
        "before": {
            "anchor": "Eye test at the optician on Friday, first one in six years.",
            "evidence": "Been getting headaches reading the menu boards at the station, that's why I booked.",
            "ev_words": ["menu", "boards"],
            "question": "What problem made {u} book before the eye test?",
            "answer": "headaches reading the station menu boards",
            "distractor": "The menu boards at the new cafe are all in tiny chalk writing.",
        },
        "after": {
            "evidence": "Picked tortoiseshell frames, the round ones, I look like a professor.",
            "ev_words": ["tortoiseshell", "frames"],
            "anchor": "The eye test yesterday says I need glasses for distance now.",
            "question": "Which frames did {u} choose after the eye test?",
            "answer": "round tortoiseshell frames",
            "distractor": "Found a tortoiseshell hair clip in the car, not mine.",
        },
    },
]

# -- loose calendar dates: evidence told just outside the literal range -----------------------
# variants: "month_end" (told on the 1st-3rd about the end of the month before: question names
# that month), "weekend" (told on a Saturday or Sunday: "the weekend before <date>"), "next_day"
# (told the day after: "on <date>").
LOOSE_DATES: list[dict] = [
    {
        "key": "hallway",
        "words": ["hallway", "repaint", "repainted", "repainting"],
        "month_end": "Finally repainted the hallway at the end of last week, two coats of sage green.",
        "weekend": "Spent today repainting the hallway, two coats of sage green, arms are dead.",
        "next_day": "Repainted the hallway yesterday, two coats of sage green, arms are dead.",
        "question": "What colour did {u} paint the hallway {when}?",
        "answer": "sage green",
        "distractor": "The hallway still looks grubby, one day I'll repaint it.",
    },
    {
        "key": "ridge",
        "words": ["ridge", "hike", "hiked", "hiking"],
        "month_end": "Did the long ridge hike on Saturday, twenty-two kilometres and one very angry goat.",
        "weekend": "Just back from the long ridge hike, twenty-two kilometres and one very angry goat.",
        "next_day": "The ridge hike yesterday was twenty-two kilometres, and a goat chased us.",
        "question": "How long was the ridge hike {u} did {when}?",
        "answer": "twenty-two kilometres",
        "distractor": "Want to do the ridge hike again when the weather's better.",
    },
    {
        "key": "paella",
        "words": ["paella"],
        "month_end": (
            "Made a giant paella for the neighbours over the weekend, the pan barely fit on the hob."
        ),
        "weekend": "Making a giant paella for the neighbours tonight, the pan barely fits on the hob.",
        "next_day": "Made a giant paella for the neighbours last night, the pan barely fit on the hob.",
        "question": "What did {u} cook for the neighbours {when}?",
        "answer": "a giant paella",
        "distractor": "The neighbours invited us for paella sometime, should take them up on it.",
    },
    {
        "key": "tattoo",
        "words": ["tattoo"],
        "month_end": "Got my first tattoo the other day, a small heron on my wrist.",
        "weekend": "Got my first tattoo this afternoon, a small heron on my wrist, it stings.",
        "next_day": "Got my first tattoo yesterday, a small heron on my wrist, it stings.",
        "question": "What tattoo did {u} get {when}?",
        "answer": "a small heron on the wrist",
        "distractor": "Still thinking about a tattoo, can't decide on a design.",
    },
    {
        "key": "bike_fix",
        "words": ["gears", "derailleur"],
        "month_end": (
            "Sorted the bike gears myself at the weekend, a new derailleur cable and lots of swearing."
        ),
        "weekend": "Sorted the bike gears myself today, a new derailleur cable and lots of swearing.",
        "next_day": "Sorted the bike gears myself yesterday, a new derailleur cable and lots of swearing.",
        "question": "What did {u} replace on the bike {when}?",
        "answer": "the derailleur cable",
        "distractor": "The gears keep slipping on hills, I should look at them.",
    },
    {
        "key": "quilt",
        "words": ["quilt"],
        "month_end": "Finished the patchwork quilt for my niece at the end of the month, forty-nine squares.",
        "weekend": "Finished the patchwork quilt for my niece today, forty-nine squares, all wonky.",
        "next_day": "Finished the patchwork quilt for my niece yesterday, forty-nine squares, all wonky.",
        "question": "How many squares did the quilt {u} finished {when} have?",
        "answer": "forty-nine",
        "distractor": "Bought fabric for a quilt, no idea when I'll start it.",
    },
    {
        "key": "escape_room",
        "words": ["escape"],
        "month_end": "We did an escape room on Friday, pirate theme, got out with forty seconds left.",
        "weekend": "Did an escape room this afternoon, pirate theme, got out with forty seconds left.",
        "next_day": "Did an escape room last night, pirate theme, got out with forty seconds left.",
        "question": "What theme was the escape room {u} did {when}?",
        "answer": "pirates",
        "distractor": "Someone at work wants to do an escape room as a team event, help.",
    },
    {
        "key": "jam",
        "words": ["jam", "plums", "plum"],
        "month_end": "Made nine jars of plum jam over the weekend, the kitchen is sticky forever.",
        "weekend": "Making plum jam all day, nine jars so far, the kitchen is sticky forever.",
        "next_day": "Made nine jars of plum jam yesterday, the kitchen is sticky forever.",
        "question": "What did {u} make with the plums {when}?",
        "answer": "nine jars of plum jam",
        "distractor": "The plum tree is loaded this year, might do something with them.",
    },
]
LOOSE_WHEN = {
    "month_end": "in {month}",
    "weekend": "the weekend before {date}",
    "next_day": "on {date}",
}

# -- relative phrases with their own anchor -----------------------------------------------------
# "date": a weekday phrase pinned by the date given with it ("last Monday, on 3 March").
OWN_DATE_ITEMS: list[dict] = [
    {
        "key": "grant",
        "words": ["grant"],
        "text": "Submitted the grant application at 4:59pm, one minute before the deadline.",
        "question": "What did {u} submit {when}?",
        "answer": "the grant application",
        "distractors": [
            "The grant people still haven't replied, it's been weeks.",
            "Might apply for a grant.",
        ],
    },
    {
        "key": "keys",
        "words": ["keys", "locksmith"],
        "text": "Handed back the keys to the old office today, twelve years in that building.",
        "question": "What did {u} hand back {when}?",
        "answer": "the keys to the old office",
        "distractors": ["Lost my keys in the sofa for an hour.", "Need to get spare keys cut."],
    },
    {
        "key": "tooth",
        "words": ["tooth", "dentist", "filling"],
        "text": "Dentist pulled my wisdom tooth today, I look like a hamster.",
        "question": "What did the dentist do to {u} {when}?",
        "answer": "pulled a wisdom tooth",
        "distractors": ["Dentist reminder letter came, ignoring it.", "Tooth feels a bit sensitive to cold."],
    },
    {
        "key": "car_sale",
        "words": ["hatchback"],
        "text": "Sold the old hatchback to a student for eight hundred, cash in an envelope.",
        "question": "What did {u} sell {when}?",
        "answer": "the old hatchback, for eight hundred",
        "distractors": ["The hatchback needs new tyres again.", "Thinking of selling the hatchback."],
    },
    {
        "key": "thesis",
        "words": ["thesis"],
        "text": "Printed and bound the thesis today, all three hundred pages, it's real now.",
        "question": "What did {u} get printed and bound {when}?",
        "answer": "the thesis",
        "distractors": [
            "Thesis supervisor wants another chapter, great.",
            "Thesis formatting is eating my life.",
        ],
    },
    {
        "key": "adoption",
        "words": ["kitten", "kittens", "shelter"],
        "text": "Brought home a grey kitten from the shelter today, she's hiding under the bed.",
        "question": "What did {u} bring home from the shelter {when}?",
        "answer": "a grey kitten",
        "distractors": [
            "The shelter posted photos of new kittens.",
            "Volunteering at the shelter next month.",
        ],
    },
    {
        "key": "contract",
        "words": ["contract", "signed"],
        "text": "Signed the contract for the new studio space today, a whole room with north light.",
        "question": "What did {u} sign {when}?",
        "answer": "the contract for the new studio space",
        "distractors": ["Reading the contract small print, boring.", "The phone contract renews soon."],
    },
    {
        "key": "blood_test",
        "words": ["blood", "nurse"],
        "text": "Had my blood test this morning, the nurse found the vein on the third go.",
        "question": "What test did {u} have {when}?",
        "answer": "a blood test",
        "distractors": ["Blood test results came back normal.", "Need to book a blood test at some point."],
    },
]
OWN_DATE_WHEN = [
    "last {weekday}, on {date}",
    "on {weekday} {date}",
    "that {weekday}, the {ordinal} of {month}",
    "last {weekday} ({date})",
]

# "self": the memory dates itself ("back in 2023"); the question dates the same time in other words
# ("two years ago"). Each family: statements about the same kind of thing at different times; one is
# asked about. ``when`` maps a statement to the question wording that resolves to its time (asked
# in December 2025); ``told`` is the range of months the statement is said in.
OWN_SELF_FAMILIES: list[dict] = [
    {
        "key": "hobby",
        "question": "What did {u} take up {when}?",
        "statements": [
            (
                "I took up pottery back in 2023 and I'm still rubbish at centring the clay.",
                "pottery",
                "two years ago",
                (1, 6),
            ),
            (
                "Last year I took up bouldering, my forearms have never recovered.",
                "bouldering",
                "in 2024",
                (2, 9),
            ),
            ("When I was fifteen I took up the drums for exactly one month.", "the drums", None, (3, 10)),
        ],
    },
    {
        "key": "walk",
        "question": "Which long walk did {u} do {when}?",
        "statements": [
            (
                "Last year I walked the Camino from Porto, best three weeks of my life.",
                "the Camino from Porto",
                "in 2024",
                (1, 8),
            ),
            (
                "In 2022 I did the hut-to-hut trail in the Dolomites, never been so tired.",
                "the Dolomites trail",
                "three years ago",
                (2, 10),
            ),
            ("Next year I'd love to walk the coast path in Cornwall.", None, None, (4, 11)),
        ],
    },
    {
        "key": "summer_job",
        "question": "What summer job did {u} have {when}?",
        "statements": [
            (
                "Two years ago I spent the whole summer working on a sheep farm in Wales.",
                "a sheep farm in Wales",
                "in 2023",
                (6, 11),
            ),
            (
                "Back in 2021 I sold ice cream on the beach all summer, I still can't look at a cone.",
                "selling ice cream on the beach",
                "four years ago",
                (1, 11),
            ),
            ("My brother is a lifeguard every summer, he's insufferable about his tan.", None, None, (5, 9)),
        ],
    },
    {
        "key": "injury",
        "question": "What did {u} break {when}?",
        "statements": [
            (
                "In 2022 I broke my wrist snowboarding, it still clicks when it rains.",
                "the wrist",
                "three years ago",
                (1, 11),
            ),
            (
                "Last year I broke my collarbone falling off a scooter, so embarrassing.",
                "the collarbone",
                "in 2024",
                (1, 7),
            ),
            ("Twisted my ankle on the kerb this morning, nothing broken.", None, None, (8, 11)),
        ],
    },
    {
        "key": "language_start",
        "question": "Which language did {u} start learning {when}?",
        "statements": [
            (
                "A year ago this month I started learning Icelandic, still can't pronounce anything.",
                "Icelandic",
                "in 2024",
                (2, 9),
            ),
            (
                "Started Welsh lessons back in 2023 but gave up after the mutations.",
                "Welsh",
                "two years ago",
                (1, 8),
            ),
            ("Thinking of learning Portuguese next, for the food mostly.", None, None, (5, 11)),
        ],
    },
    {
        "key": "move_city",
        "question": "Where did {u} live {when}?",
        "statements": [
            (
                "Last year I was still renting that damp flat above the laundrette.",
                "the damp flat above the laundrette",
                "in 2024",
                (1, 6),
            ),
            (
                "Back in 2022 I lived on a houseboat for six months, never again.",
                "on a houseboat",
                "three years ago",
                (1, 10),
            ),
            ("My friend lives in a converted church now, with a bell tower.", None, None, (3, 11)),
        ],
    },
]

# -- time words the memory itself uses (the range is empty or elsewhere; the words are not) -----
TIME_WORD_ITEMS: list[dict] = [
    {
        "key": "christmas",
        "phrase": "last Christmas",
        "told": (1, 2),
        "text": "Last Christmas the oven died halfway through the turkey, we ate at midnight.",
        "question": "What went wrong at {u}'s place last Christmas?",
        "answer": "the oven died halfway through the turkey",
        "distractors": [
            ("This Christmas I'm not hosting, someone else can fight with the oven.", (10, 11)),
            ("Christmas lights are up in town already, far too early.", (11, 11)),
        ],
    },
    {
        "key": "road_trip",
        "phrase": "last summer",
        "told": (9, 11),
        "text": (
            "The road trip we took last summer was the best thing we did, the whole west coast of Ireland."
        ),
        "question": "Where did {u} go on the road trip last summer?",
        "answer": "the west coast of Ireland",
        "distractors": [
            ("Thinking about a road trip next summer, maybe through the Alps.", (1, 4)),
            ("My cousin's road trip sounds like a disaster, three punctures so far.", (6, 8)),
        ],
    },
    {
        "key": "last_year_holiday",
        "phrase": "last year",
        "told": (1, 10),
        "text": "For my birthday last year we rented a cabin with a hot tub in the forest.",
        "question": "What did {u} do for the birthday last year?",
        "answer": "rented a forest cabin with a hot tub",
        "distractors": [
            ("No idea what to do for my birthday this time, maybe nothing.", (1, 11)),
            ("My sister's birthday is next week, I haven't bought anything.", (1, 11)),
        ],
    },
    {
        "key": "winter_pipes",
        "phrase": "last winter",
        "told": (4, 10),
        "text": "Last winter the pipes froze twice and we had to fetch water from the neighbours.",
        "question": "What happened with the pipes last winter at {u}'s?",
        "answer": "they froze twice; fetched water from the neighbours",
        "distractors": [
            ("Insulating the pipes before this winter, not doing that again.", (10, 11)),
            ("The pipes in the office bathroom bang every morning.", (1, 3)),
        ],
    },
    {
        "key": "two_years_concert",
        "phrase": "two years ago",
        "told": (6, 11),
        "text": "Two years ago I saw the band play in a tiny bar, twenty people, best concert of my life.",
        "question": "What concert did {u} see two years ago?",
        "answer": "the band in a tiny bar with twenty people",
        "distractors": [
            ("Got tickets for a concert next spring, huge arena, not my thing.", (1, 11)),
            ("The concert on the radio last night was lovely.", (1, 11)),
        ],
    },
    {
        "key": "new_year",
        "phrase": "last New Year's Eve",
        "told": (1, 3),
        "text": "Last New Year's Eve we watched the fireworks from the roof of the car park.",
        "question": "Where did {u} watch the fireworks last New Year's Eve?",
        "answer": "from the roof of the car park",
        "distractors": [
            ("No plans for New Year's Eve yet, maybe stay in.", (11, 11)),
            ("Fireworks scared the neighbour's dog all evening.", (4, 10)),
        ],
    },
    {
        "key": "last_spring",
        "phrase": "last spring",
        "told": (7, 11),
        "text": "Last spring I planted two hundred tulip bulbs and squirrels dug up half of them.",
        "question": "What did {u} plant last spring?",
        "answer": "two hundred tulip bulbs",
        "distractors": [
            ("Bought tulips at the market for the kitchen table.", (1, 4)),
            ("Should I plant bulbs before the frost? No idea.", (11, 11)),
        ],
    },
]

# -- a strong keyword match against short, generic turns that look like the question -----------
# "echoes" are short lines that are shaped like the question and say nothing.
GENERIC_ITEMS: list[dict] = [
    {
        "key": "osteopath",
        "words": ["osteopath"],
        "text": (
            "The osteopath thinks it's my desk chair, she wants the monitor higher and a stretch every hour."
        ),
        "question": "What did {u}'s osteopath suggest?",
        "answer": "raise the monitor, stretch every hour (blames the chair)",
        "echoes": [
            "What did they suggest?",
            "Ooh, and what did she suggest?",
            "Did anyone suggest anything?",
        ],
    },
    {
        "key": "kayak",
        "words": ["kayak", "kayaking"],
        "text": "Kayak club trip is confirmed: three days paddling down the Wye valley.",
        "question": "Where is {u} off to with the kayak club?",
        "answer": "three days down the Wye valley",
        "echoes": [
            "Sounds fun! Where are you off to?",
            "Where are you off to this time?",
            "Off somewhere nice?",
        ],
    },
    {
        "key": "bakery",
        "words": ["lebanese", "manakish", "za'atar"],
        "text": "Got a whole box of za'atar manakish from the Lebanese bakery, dinner sorted.",
        "question": "What did {u} order from the Lebanese bakery?",
        "answer": "za'atar manakish",
        "echoes": ["What did you order?", "What did you end up ordering?", "So what did you get in the end?"],
    },
    {
        "key": "mechanic",
        "words": ["alternator"],
        "text": "Garage rang: it's the alternator, three hundred and forty with labour.",
        "question": "How much will the alternator repair cost {u}?",
        "answer": "three hundred and forty with labour",
        "echoes": ["How much will that cost you?", "Ouch, how much?", "Did they say how much it'll be?"],
    },
    {
        "key": "landlady",
        "words": ["landlady"],
        "text": "The landlady agreed to paint the bedroom if I buy the paint, fair deal.",
        "question": "What did {u}'s landlady agree to?",
        "answer": "to paint the bedroom if the paint is bought",
        "echoes": ["Did she agree?", "What did they agree to in the end?", "So did they agree to it?"],
    },
    {
        "key": "book_club",
        "words": ["book", "club"],
        "text": "Book club picked a nine-hundred-page Russian classic for next month, I'm doomed.",
        "question": "What did {u}'s book club pick for next month?",
        "answer": "a nine-hundred-page Russian classic",
        "echoes": ["What did they pick?", "Ooh, what's next month's pick?", "What did you pick in the end?"],
    },
    {
        "key": "pharmacist",
        "words": ["pharmacist", "antihistamine"],
        "text": "The pharmacist switched me to a non-drowsy antihistamine, taken at night.",
        "question": "What did the pharmacist give {u}?",
        "answer": "a non-drowsy antihistamine",
        "echoes": ["What did they give you?", "Did they give you anything for it?", "What did you get?"],
    },
    {
        "key": "florist",
        "words": ["florist", "peonies"],
        "text": "Florist talked me into peonies instead of roses for the table, good call.",
        "question": "Which flowers did the florist talk {u} into?",
        "answer": "peonies instead of roses",
        "echoes": ["Which ones did you go for?", "Which did you choose in the end?", "Which ones?"],
    },
    {
        "key": "removals",
        "words": ["removal", "removals"],
        "text": "Removal company is booked for the 14th, four men and a lorry, eight in the morning.",
        "question": "When is {u}'s removal company coming?",
        "answer": "the 14th at eight in the morning",
        "echoes": ["When are they coming?", "When's that happening?", "Oh, when?"],
    },
]

# Short openers a generic echo answers.
GENERIC_LEADS = [
    "So that happened.",
    "Small update.",
    "Well, I finally did it.",
    "Had an appointment this morning.",
    "Guess what.",
    "Big day today, sort of.",
    "Okay, news.",
    "Remember the thing I mentioned?",
    "It's sorted, kind of.",
    "Finally heard back.",
]

# -- replies whose meaning is in the turn they answer ------------------------------------------
# "suggest": the assistant suggests, the user's short reply commits (evidence: the reply).
REPLY_SUGGESTIONS: list[dict] = [
    {
        "key": "wrist",
        "words": ["wrist", "fingerboard"],
        "prompt": "My wrist still aches after climbing, even on easy days.",
        "suggestion": "For climbing wrists a lot of people swear by slow wrist curls with a light dumbbell.",
        "question": "What did {u} agree to try for the sore wrist?",
        "answer": "slow wrist curls with a light dumbbell",
    },
    {
        "key": "sleep_app",
        "words": ["insomnia", "asleep"],
        "prompt": "I lie awake for hours, my brain won't switch off.",
        "suggestion": "You could try writing tomorrow's to-do list on paper before bed, it empties the head.",
        "question": "What did {u} agree to do about lying awake at night?",
        "answer": "write a to-do list on paper before bed",
    },
    {
        "key": "spanish",
        "words": ["spanish", "fluent"],
        "prompt": "My Spanish is stuck, I understand everything and can say nothing.",
        "suggestion": (
            "A weekly conversation exchange at the library might unlock it, they meet on Wednesdays."
        ),
        "question": "What did {u} decide to try to improve the Spanish?",
        "answer": "the weekly conversation exchange at the library",
    },
    {
        "key": "budget",
        "words": ["overspending", "savings"],
        "prompt": "I'm overspending every month and I don't even know on what.",
        "suggestion": (
            "Maybe try the envelope method: cash for food and fun, nothing else leaves the account."
        ),
        "question": "Which money method did {u} agree to try?",
        "answer": "the envelope method with cash",
    },
    {
        "key": "tomatoes",
        "words": ["seedlings", "leggy"],
        "prompt": "My seedlings are all tall and floppy and falling over.",
        "suggestion": "They sound leggy, a cheap grow light on a timer usually fixes that.",
        "question": "What did {u} agree to get for the floppy seedlings?",
        "answer": "a grow light on a timer",
    },
    {
        "key": "posture",
        "words": ["posture", "hunched"],
        "prompt": "I'm hunched over the laptop all day, my neck is a brick.",
        "suggestion": "A laptop stand and a separate keyboard would lift the screen to eye level.",
        "question": "What did {u} agree to buy for the neck pain?",
        "answer": "a laptop stand and a separate keyboard",
    },
    {
        "key": "gift",
        "words": ["anniversary", "gift"],
        "prompt": "Our anniversary is coming and I have zero gift ideas.",
        "suggestion": "How about a pottery class for two? Something to do together rather than a thing.",
        "question": "What anniversary present did {u} settle on?",
        "answer": "a pottery class for two",
    },
    {
        "key": "procrastination",
        "words": ["procrastinating", "pomodoro"],
        "prompt": "I've been procrastinating on the report for a week.",
        "suggestion": "Try twenty-five minute pomodoro blocks with the phone in another room.",
        "question": "What technique did {u} agree to try for the report?",
        "answer": "pomodoro blocks with the phone in another room",
    },
]
REPLY_COMMITS = [
    "Sure, I'll try that next week.",
    "Okay, deal. I'll sort it out tomorrow.",
    "Fine, you've convinced me, I'll give it a go.",
    "Good idea, doing that this weekend.",
    "Alright, I'll try it and report back.",
    "Yes! Let's do that.",
    "Hm, worth a shot. I'll start on Monday.",
    "You're right, I'll look into it tonight.",
]
# "companion": the user asks the companion, whose answer (the evidence) leaves out the subject.
REPLY_COMPANION: list[dict] = [
    {
        "key": "georgian",
        "words": ["georgian", "supra"],
        "ask": "{c}, what was that Georgian place you liked called?",
        "answer_turn": "Oh, Supra! On Mill Street. Get the cheese bread, trust me.",
        "question": "Which Georgian restaurant did {c} recommend to {u}?",
        "answer": "Supra on Mill Street",
    },
    {
        "key": "mechanic_name",
        "words": ["mechanic", "garage"],
        "ask": "{c}, who was the mechanic who did your clutch so cheaply?",
        "answer_turn": "Dragan, behind the tyre place. Cash only, but honest.",
        "question": "Which mechanic did {c} recommend to {u}?",
        "answer": "Dragan, behind the tyre place",
    },
    {
        "key": "podcast",
        "words": ["podcast"],
        "ask": "{c}, what's the podcast you keep quoting at me?",
        "answer_turn": "It's called The Slow Archive, two historians arguing about old maps.",
        "question": "Which podcast does {c} keep quoting to {u}?",
        "answer": "The Slow Archive",
    },
    {
        "key": "plant_food",
        "words": ["fiddle", "fig"],
        "ask": "{c}, how do you keep your fiddle-leaf fig alive?",
        "answer_turn": "Water once a week, never move it, and talk to it nicely. Seriously.",
        "question": "What did {c} say keeps the fiddle-leaf fig alive?",
        "answer": "water weekly, never move it, talk to it",
    },
    {
        "key": "bookshop",
        "words": ["bookshop", "signed"],
        "ask": "{c}, which bookshop had that signed copy you were on about?",
        "answer_turn": "The tiny one under the railway arch, Foxed Pages. They close at five.",
        "question": "Which bookshop did {c} tell {u} about?",
        "answer": "Foxed Pages, under the railway arch",
    },
]
# "continue": the user's second turn carries the news the first one announced.
REPLY_CONTINUE: list[dict] = [
    {
        "key": "permit",
        "words": ["permit", "council"],
        "first": "Heard back from the council about the parking permit.",
        "nudge": "And? Good news?",
        "second": "Nope, a six-month waiting list, and they've lost my form anyway.",
        "question": "What did the council say about {u}'s parking permit?",
        "answer": "six-month waiting list and they lost the form",
    },
    {
        "key": "visa",
        "words": ["visa", "embassy"],
        "first": "The embassy finally emailed about the visa.",
        "nudge": "Oh! What did they say?",
        "second": "Approved, but only for ninety days, so the long trip has to shrink.",
        "question": "What was the embassy's answer about {u}'s visa?",
        "answer": "approved for ninety days only",
    },
    {
        "key": "biopsy",
        "words": ["results", "scan"],
        "first": "Got the results from the scan on my mole.",
        "nudge": "How did it go?",
        "second": "All clear, totally harmless, I can stop googling things at 3am.",
        "question": "What were the results of {u}'s scan?",
        "answer": "all clear, harmless",
    },
    {
        "key": "insurance",
        "words": ["insurance", "claim"],
        "first": "The insurance people phoned about the claim for the stolen scooter.",
        "nudge": "Are they paying out?",
        "second": "They'll pay sixty percent because the lock wasn't on their approved list.",
        "question": "How did {u}'s insurance claim for the stolen scooter turn out?",
        "answer": "sixty percent paid; lock not approved",
    },
    {
        "key": "school",
        "words": ["school", "nursery"],
        "first": "Heard from the nursery about a place for my nephew.",
        "nudge": "Did he get in?",
        "second": "He starts in January, three days a week, my sister is over the moon.",
        "question": "What did the nursery say about the place for {u}'s nephew?",
        "answer": "starts in January, three days a week",
    },
]

# -- the current state of something that changed over the year (imported history) -------------
STATE_ITEMS: list[dict] = [
    {
        "key": "gym",
        "words": ["gym", "membership"],
        "states": [
            ("Joined the Ironworks gym by the office, the showers are cold.", "Ironworks"),
            (
                "Cancelled Ironworks, I'm at the climbing hall on Canal Street now, so much better.",
                "the climbing hall on Canal Street",
            ),
        ],
        "questions": ["Which gym does {u} go to now?", "Where does {u} work out?"],
    },
    {
        "key": "phone",
        "words": ["phone", "pixel", "iphone"],
        "states": [
            ("My phone is a hand-me-down iPhone with a cracked back, works fine.", "an old iPhone"),
            ("Switched to a second-hand Pixel, the camera is ridiculous.", "a second-hand Pixel"),
        ],
        "questions": ["What phone does {u} use?", "Which phone is {u} on these days?"],
    },
    {
        "key": "commute",
        "words": ["commute", "tram", "ferry"],
        "states": [
            (
                "Taking the tram to work, forty minutes of standing with my face in someone's armpit.",
                "the tram",
            ),
            ("I take the ferry to work now, twenty minutes on the water with the gulls, bliss.", "the ferry"),
        ],
        "questions": ["How does {u} get to work now?", "What is {u}'s commute?"],
    },
    {
        "key": "diet",
        "words": ["vegetarian", "vegan", "meat"],
        "states": [
            ("Trying to go vegetarian during the week, meat only at weekends.", "weekday vegetarian"),
            ("Went fully vegan last month, cheese is the only thing I miss.", "vegan"),
        ],
        "questions": ["What does {u} eat, diet-wise?", "Is {u} vegetarian?"],
    },
    {
        "key": "team",
        "words": ["team", "department", "marketing", "logistics"],
        "states": [
            ("Moved into the logistics team at work, lots of spreadsheets about pallets.", "logistics"),
            ("Transferred to marketing at last, my desk is by the window at last.", "marketing"),
        ],
        "questions": ["Which team is {u} in at work now?", "What department does {u} work in?"],
    },
    {
        "key": "bike",
        "words": ["bike", "bicycle", "cargo"],
        "states": [
            ("Riding my dad's old steel road bike, it weighs a ton.", "the old steel road bike"),
            (
                "Bought an electric cargo bike, I carry the shopping and the neighbour's dog in it.",
                "an electric cargo bike",
            ),
        ],
        "questions": ["What bike does {u} ride now?", "What does {u} cycle on?"],
    },
    {
        "key": "coffee",
        "words": ["coffee", "moka", "aeropress", "espresso"],
        "states": [
            ("Making coffee in a little moka pot on the stove, it spits everywhere.", "a moka pot"),
            ("Got an Aeropress, the moka pot has retired to the back of the cupboard.", "an Aeropress"),
        ],
        "questions": ["How does {u} make coffee at home now?", "What does {u} brew coffee with?"],
    },
    {
        "key": "hair",
        "words": ["hair", "fringe", "bob"],
        "states": [
            ("Growing my hair out, it's at the awkward stage where nothing works.", "growing it out"),
            ("Chopped it all off into a short bob with a fringe, I love it.", "a short bob with a fringe"),
        ],
        "questions": ["What is {u}'s hairstyle like now?", "How does {u} wear their hair?"],
    },
]

# -- several memories needed --------------------------------------------------------------------
# "chain": one turn says who did something ({p}), another what {p} does (linked by the name only).
MULTI_CHAINS: list[dict] = [
    {
        "key": "headlamp",
        "first": "{p} from the running club lent me a headlamp for the night trail, lifesaver.",
        "second": "{p} drives the night tram, which explains why they can run at midnight.",
        "question": "What does the person who lent {u} a headlamp do for work?",
        "answer": "drives the night tram",
    },
    {
        "key": "cake",
        "first": "{p} baked the most ridiculous lemon cake for my birthday, three layers.",
        "second": "{p} is training to be a paramedic, exams all spring.",
        "question": "What is the person who baked {u}'s birthday cake training to be?",
        "answer": "a paramedic",
    },
    {
        "key": "ladder",
        "first": "{p} from two doors down helped me get the cat off the roof with a ladder.",
        "second": "{p} keeps bees in the back garden, we get honey every autumn.",
        "question": "What does the neighbour who rescued {u}'s cat keep in the garden?",
        "answer": "bees",
    },
    {
        "key": "tax",
        "first": "{p} sorted out my tax return in one evening, I owe them dinner.",
        "second": "{p} has just moved to Tallinn for a job at the port.",
        "question": "Where did the person who did {u}'s tax return move to?",
        "answer": "Tallinn",
    },
    {
        "key": "wedding_dj",
        "first": "{p} is going to DJ at our wedding, for free, which is terrifying.",
        "second": "{p} only plays Finnish tango, so that could be interesting.",
        "question": "What music does the person DJing {u}'s wedding play?",
        "answer": "Finnish tango",
    },
]
# "story": one event told over two turns of one session, the second carrying the details.
MULTI_STORIES: list[dict] = [
    {
        "key": "flight_home",
        "first": "The flight home from the conference was a shambles.",
        "second": "First a four-hour delay, then they sent my suitcase to Oslo without me.",
        "question": "What went wrong on {u}'s flight home from the conference?",
        "answer": "a four-hour delay and the suitcase sent to Oslo",
    },
    {
        "key": "dinner_party",
        "first": "The dinner party at my boss's house was something else.",
        "second": "His parrot swore at the CEO and the dessert caught fire, twice.",
        "question": "What happened at the dinner party at {u}'s boss's house?",
        "answer": "the parrot swore at the CEO; the dessert caught fire",
    },
    {
        "key": "camping",
        "first": "Camping in the Highlands didn't go to plan.",
        "second": "The tent pole snapped in the first gust and midges ate us alive.",
        "question": "What went wrong on {u}'s camping trip in the Highlands?",
        "answer": "a snapped tent pole and midges",
    },
    {
        "key": "kitchen_flood",
        "first": "Came home to a disaster in the kitchen.",
        "second": "The dishwasher hose split and there was an inch of water under the fridge.",
        "question": "What was the disaster in {u}'s kitchen?",
        "answer": "the dishwasher hose split, an inch of water",
    },
    {
        "key": "market_stall",
        "first": "First day running the stall at the craft market!",
        "second": "Sold every one of the mugs by noon and had to send people away.",
        "question": "How did {u}'s first day at the craft market stall go?",
        "answer": "sold all the mugs by noon",
    },
]
STORY_NUDGES = ["Oh no, what happened?", "Go on...", "Tell me everything.", "Uh oh. How so?", "And?"]
