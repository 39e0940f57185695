"""What people tell each other once: single facts and paraphrased news.

Templates: ``{x}`` is the fact's value (also the answer), ``{p}`` the person a question names
and ``{their}`` that person's possessive pronoun. ``tags`` say what an item is about, so the
generator never gives one person two items that answer each other's questions.
"""

from __future__ import annotations

from typing import NamedTuple


class Fact(NamedTuple):
    """Stated once, asked about once: the statement holds a rare value the question asks for."""

    tags: frozenset[str]
    statement: str
    question: str
    values: tuple[str, ...]


class Paraphrase(NamedTuple):
    """News told in words the question does not use (no content word in common)."""

    tags: frozenset[str]
    statement: str
    question: str
    answer: str


def _t(*tags: str) -> frozenset[str]:
    return frozenset(tags)


FACTS: tuple[Fact, ...] = (
    Fact(
        _t("lock"),
        "New bike lock, the code is {x}, writing it here so I don't forget it.",
        "What is the code of {p}'s bike lock?",
        ("4172", "9035", "2864", "7310", "5528", "6091"),
    ),
    Fact(
        _t("restaurant"),
        "Booked {x} for the anniversary, table by the window at eight.",
        "Which restaurant did {p} book for the anniversary?",
        (
            "Quince & Clove",
            "The Copper Pot",
            "Little Saffron",
            "Harbour Lights",
            "Osteria Nonna",
            "The Fig Tree",
        ),
    ),
    Fact(
        _t("vet", "pet"),
        "The vet rang back: the cat's bloods are fine, it's her teeth, she needs {x} out.",
        "What did the vet say {p}'s cat needs?",
        ("two molars", "three teeth", "one canine", "a back tooth"),
    ),
    Fact(
        _t("instrument", "learning", "music"),
        "I'm finally learning the {x}, lessons on Thursday evenings.",
        "Which instrument is {p} learning?",
        ("cello", "banjo", "clarinet", "harp", "accordion", "double bass"),
    ),
    Fact(
        _t("granny", "party"),
        "My grandmother turns {x} next month and wants a ceilidh.",
        "How old is {p}'s grandmother turning?",
        ("91", "93", "88", "95", "90", "87"),
    ),
    Fact(
        _t("sofa", "home"),
        "Ordered a {x} sofa, arrives in six weeks apparently.",
        "What colour is the sofa {p} ordered?",
        ("teal", "mustard", "rust", "navy", "forest green", "dove grey"),
    ),
    Fact(
        _t("flight", "travel", "wedding"),
        "My flight for the Dublin wedding is {x}, leaves at dawn.",
        "What is {p}'s flight number for the Dublin wedding?",
        ("BA 2471", "EZY 8830", "FR 1196", "KL 1024", "LH 907", "TP 1337"),
    ),
    Fact(
        _t("allergy", "health"),
        "The allergy test came back, I'm allergic to {x} of all things.",
        "What is {p} allergic to?",
        ("birch pollen", "cats", "shellfish", "latex", "penicillin", "hazelnuts"),
    ),
    Fact(
        _t("brother", "shop"),
        "My brother is opening a {x} on the high street next to the chemist.",
        "What kind of shop is {p}'s brother opening?",
        ("bakery", "bike repair shop", "record shop", "florist", "barber's", "bookshop"),
    ),
    Fact(
        _t("starter", "cooking"),
        "I named my sourdough starter {x}, he lives on the top shelf.",
        "What is the name of {p}'s sourdough starter?",
        ("Gerald", "Doughvid", "Clint Yeastwood", "Bubbles", "Norman", "Sir Loafalot"),
    ),
    Fact(
        _t("locker", "sport", "swimming"),
        "Swimming pool locker is number {x}, same one every week now.",
        "Which locker does {p} use at the pool?",
        ("214", "57", "132", "309", "88", "176"),
    ),
    Fact(
        _t("niece", "learning"),
        "My niece got into {x} to study marine biology!",
        "Where is {p}'s niece going to study?",
        ("Aberdeen", "Plymouth", "Bangor", "St Andrews", "Galway", "Swansea"),
    ),
    Fact(
        _t("paint", "home"),
        "Picked the bedroom paint at last: it's called {x}.",
        "Which paint did {p} choose for the bedroom?",
        ("Sage Mist", "Oyster Shell", "Midnight Tide", "Pale Biscuit", "Foxglove", "Storm Cloud"),
    ),
    Fact(
        _t("running", "sport"),
        "The running club meets at the {x} every Tuesday, six sharp.",
        "Where does {p}'s running club meet?",
        ("old gasworks", "bandstand", "lido gates", "war memorial", "canal lock", "library steps"),
    ),
    Fact(
        _t("plumber", "home"),
        "The plumber quoted {x} for the bathroom pipes, I nearly fainted.",
        "How much did the plumber quote {p}?",
        ("£640", "£1,150", "£380", "£920", "£2,300", "£515"),
    ),
    Fact(
        _t("play", "school"),
        "The kids' school play is {x}, mine is a reindeer with one line.",
        "Which school play is {p}'s kid in?",
        ("The Snow Queen", "Peter Pan", "The Wizard of Oz", "Oliver!", "Matilda", "Treasure Island"),
    ),
    Fact(
        _t("gp", "health"),
        "I've been moved to a new GP, a Dr {x}, seems nice enough.",
        "Who is {p}'s new GP?",
        ("Okafor", "Lindqvist", "Mehta", "Brennan", "Sato", "Abernathy"),
    ),
    Fact(
        _t("wifi", "home"),
        "The new wifi password is {x}, don't ask.",
        "What is {p}'s wifi password?",
        ("tangerine-owl-42", "purple-kettle-9", "mossy-robot-17", "lazy-heron-33", "fizzy-barn-8"),
    ),
    Fact(
        _t("class", "learning"),
        "Signed up for a {x} class at the community centre, starts next week.",
        "What class did {p} sign up for at the community centre?",
        ("pottery", "life drawing", "salsa", "woodturning", "stand-up comedy", "calligraphy"),
    ),
    Fact(
        _t("inlaw"),
        "My brother-in-law just became a {x}, which surprised everyone.",
        "What does {p}'s brother-in-law do now?",
        ("crane operator", "tattoo artist", "ferry captain", "sommelier", "beekeeper", "lighthouse keeper"),
    ),
    Fact(
        _t("dog", "pet"),
        "We adopted a {x}! She's called Pepper and she's terrified of the hoover.",
        "What breed of dog did {p} adopt?",
        ("greyhound", "whippet", "beagle", "staffie", "spaniel", "lurcher"),
    ),
    Fact(
        _t("tattoo"),
        "Got my first tattoo, a tiny {x} on my ankle.",
        "What tattoo did {p} get?",
        ("swallow", "fern leaf", "paper plane", "lighthouse", "crescent moon", "bee"),
    ),
    Fact(
        _t("shoes"),
        "Turns out my feet are a size {x} now?? Apparently feet keep growing.",
        "What shoe size is {p}?",
        ("7", "9", "11", "5", "10", "8"),
    ),
    Fact(
        _t("boardgame"),
        "New favourite board game: {x}. We played it till 2am.",
        "Which board game is {p}'s new favourite?",
        ("Azul", "Wingspan", "Cascadia", "Patchwork", "Carcassonne", "Splendor"),
    ),
    Fact(
        _t("quiz"),
        "Our pub quiz team is called {x}, and we came third!",
        "What is {p}'s pub quiz team called?",
        ("Quizteama Aguilera", "Les Quizerables", "The Smarty Pints", "Agatha Quiztie", "The Know-It-Ales"),
    ),
    Fact(
        _t("present", "mum"),
        "Mum's birthday present is sorted: a {x}.",
        "What did {p} get {their} mum for her birthday?",
        ("pasta machine", "silk scarf", "bird feeder", "pottery vase", "spa voucher", "rose bush"),
    ),
    Fact(
        _t("bins", "home"),
        "Bin day moved to {x} and nobody told us, so the bags are piling up.",
        "Which day are {p}'s bins collected now?",
        ("Wednesday", "Friday", "Monday", "Thursday", "Tuesday"),
    ),
)


PARAPHRASES: tuple[Paraphrase, ...] = (
    Paraphrase(
        _t("job"),
        "Handed in my notice today, Friday is my last shift at the bakery.",
        "Is {p} leaving {their} job?",
        "yes, handed in notice at the bakery",
    ),
    Paraphrase(
        _t("baby", "family"),
        "The little one took her first steps across the kitchen this morning!",
        "What milestone did {p}'s baby reach?",
        "first steps",
    ),
    Paraphrase(
        _t("health", "bug"),
        "I can't keep anything down and the room is spinning, staying in bed.",
        "Why was {p} feeling unwell?",
        "vomiting and dizzy",
    ),
    Paraphrase(
        _t("driving"),
        "Passed! The examiner said my parallel parking was the best she'd seen all week.",
        "How did {p}'s driving test go?",
        "passed",
    ),
    Paraphrase(
        _t("phone"),
        "My phone slid off the pier and straight into the harbour.",
        "How did {p} lose {their} mobile?",
        "dropped it off the pier into the harbour",
    ),
    Paraphrase(
        _t("home", "council"),
        "Got a letter from the council: the extension plans were rejected.",
        "What happened with {p}'s application to enlarge the house?",
        "the council rejected it",
    ),
    Paraphrase(
        _t("health", "injury"),
        "Two stitches above my eyebrow, walked straight into a cupboard door.",
        "How did {p} get hurt?",
        "walked into a cupboard door",
    ),
    Paraphrase(
        _t("home", "moving"),
        "Our offer on the cottage was accepted!",
        "Did {p} manage to buy a house?",
        "yes, the cottage",
    ),
    Paraphrase(
        _t("food", "cooking"),
        "I've stopped eating meat, it's been a month now.",
        "Is {p} vegetarian?",
        "yes, for a month",
    ),
    Paraphrase(
        _t("child", "school"),
        "The nursery rang, Ollie has chickenpox so he's home all week.",
        "Why is {p}'s son off sick?",
        "chickenpox",
    ),
    Paraphrase(
        _t("sport", "running"),
        "Entered the coastal marathon last night, twenty-six miles along the cliffs.",
        "What race has {p} signed up for?",
        "the coastal marathon",
    ),
    Paraphrase(
        _t("car"),
        "Sold the old Corolla to a student for eight hundred quid.",
        "What happened to {p}'s vehicle?",
        "sold to a student",
    ),
    Paraphrase(
        _t("sleep", "health"),
        "Couldn't drop off again, I was staring at the ceiling until four.",
        "Has {p} had insomnia?",
        "yes, awake until four",
    ),
    Paraphrase(
        _t("job", "cooking"),
        "I've been promoted to head chef!",
        "What new role did {p} get in the restaurant kitchen?",
        "head chef",
    ),
    Paraphrase(
        _t("home", "boiler"),
        "The boiler's dead, we've been heating kettles to wash.",
        "What broke in {p}'s house?",
        "the boiler",
    ),
    Paraphrase(
        _t("wedding", "engaged"),
        "The proposal went perfectly, she said yes on the cliff path at sunset!",
        "Did {p} get engaged?",
        "yes, on the cliff path",
    ),
    Paraphrase(
        _t("learning", "language"),
        "I'm fluent enough now to argue with the baker in Portuguese.",
        "Which language has {p} picked up?",
        "Portuguese",
    ),
    Paraphrase(
        _t("child", "school"),
        "The twins start reception class in September.",
        "When do {p}'s kids begin school?",
        "September",
    ),
    Paraphrase(
        _t("home", "flood"),
        "Our flat got flooded from upstairs, the ceiling came down in the bathroom.",
        "What water damage did {p}'s home suffer?",
        "flooded from upstairs, ceiling down",
    ),
    Paraphrase(
        _t("health", "smoking"),
        "Six weeks now without a single cigarette.",
        "Has {p} given up tobacco?",
        "yes, six weeks",
    ),
    Paraphrase(
        _t("baby", "family"),
        "We're expecting! Due in March.",
        "Is {p} going to have a child?",
        "yes, due in March",
    ),
    Paraphrase(
        _t("travel", "passport"),
        "My passport expired so I missed the ferry to Santander.",
        "Why couldn't {p} go on {their} trip?",
        "expired passport",
    ),
    Paraphrase(
        _t("job", "money"),
        "The bank approved the loan for the van, deliveries can start.",
        "Did {p} get financing for the business?",
        "yes, a loan for the van",
    ),
    Paraphrase(
        _t("sport", "karate"),
        "Got my black belt on Saturday after six years of training.",
        "What martial arts grade has {p} achieved?",
        "black belt",
    ),
    Paraphrase(
        _t("health", "injury"),
        "Slipped on the ice and snapped my wrist, it's in plaster for six weeks.",
        "What injury did {p} get?",
        "a broken wrist",
    ),
    Paraphrase(
        _t("child", "music"),
        "My daughter got into the conservatoire to study violin.",
        "Which music school accepted {p}'s kid?",
        "the conservatoire",
    ),
    Paraphrase(
        _t("garden"),
        "Planted forty tulip bulbs along the front path.",
        "What did {p} put in the garden?",
        "tulip bulbs",
    ),
    Paraphrase(
        _t("money", "lottery"),
        "Scratched a card at the petrol station and won five hundred pounds!",
        "Did {p} have a stroke of luck?",
        "won £500 on a scratchcard",
    ),
    Paraphrase(
        _t("pet", "cat"),
        "The cat vanished for three days and strolled back in like nothing happened.",
        "Did {p}'s missing pet return?",
        "yes, after three days",
    ),
    Paraphrase(
        _t("car", "accident"),
        "A van reversed into me at the lights, the bumper's hanging off.",
        "Was {p} in a crash?",
        "a van reversed into the bumper",
    ),
)
